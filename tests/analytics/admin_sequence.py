"""A scripted admin session with known truth, written by kio's serialisers (an independent encoder):
a client authenticates with SASL PLAIN as alice, then deletes a topic, adds an allow-all ACL, deletes
an ACL, moves a group's offsets as a tool, commits as a group member (not a change), deletes records,
sets a secret and a plain configuration, upserts SCRAM credentials (refused), and deletes a group
the broker never answers. Framed (tests.kafka.frames) and carried in one TCP conversation
(tests.fuzz.conversation). `TRUTH` lists the changes in order: (operation, resources' names, results,
finding kind).
"""

from __future__ import annotations

import datetime
import io

from kio.schema.errors import ErrorCode
from kio.serial import entity_writer
from kio.static.primitive import i8, i32, i32Timedelta, i64

from kwire.codec.schemas import schema_for
from tests.fuzz.conversation import conversation_pcap
from tests.kafka.frames import request_frame, response_frame

ZERO = i32Timedelta.parse(datetime.timedelta(0))
SECRET_VALUE = "very-secret-key-pw-9981"
PLAIN_VALUE = "86400017"
CLIENT_ID = "ops-tool"

TRUTH = [
    ("delete_topics", ["orders"], ["ok"], "topic_deleted"),
    ("create_acls", ["TOPIC:*"], ["ok"], "acl_allow_all"),
    ("delete_acls", ["TOPIC:audit"], ["ok"], "acl_removed"),
    ("set_group_offsets", ["billing/orders"], ["ok"], "offsets_moved"),
    ("delete_records", ["audit"], ["ok"], "records_deleted"),
    ("incremental_alter_configs", ["1"], ["ok"], None),
    ("alter_scram_credentials", ["bob"], ["CLUSTER_AUTHORIZATION_FAILED"], "credentials_changed"),
    ("delete_groups", ["billing"], ["no_response"], "group_deleted"),
]


def kio_bytes(entity) -> bytes:
    buf = io.BytesIO()
    entity_writer(type(entity))(buf, entity)
    return buf.getvalue()


def _pair(api_key: int, version: int, corr: int, request, response) -> list[tuple[int, bytes]]:
    flexible = schema_for(api_key, "request").is_flexible(version)
    out = [(0, request_frame(api_key, version, corr, CLIENT_ID, kio_bytes(request), flexible))]
    if response is not None:
        out.append((1, response_frame(corr, kio_bytes(response), flexible)))
    return out


def messages() -> list[tuple[int, bytes]]:
    from kio.schema.create_acls.v3 import request as caq, response as car
    from kio.schema.delete_acls.v3 import request as daq, response as dar
    from kio.schema.delete_groups.v2 import request as dgq
    from kio.schema.delete_records.v2 import request as drq, response as drr
    from kio.schema.delete_topics.v6 import request as dtq, response as dtr
    from kio.schema.incremental_alter_configs.v1 import request as iaq, response as iar
    from kio.schema.offset_commit.v8 import request as ocq, response as ocr
    from kio.schema.sasl_authenticate.v2 import request as saq, response as sar
    from kio.schema.sasl_handshake.v1 import request as shq, response as shr
    from kio.schema.alter_user_scram_credentials.v0 import request as asq, response as asr

    out = _pair(17, 1, 1, shq.SaslHandshakeRequest(mechanism="PLAIN"),
                shr.SaslHandshakeResponse(error_code=ErrorCode.none, mechanisms=("PLAIN",)))
    out += _pair(36, 2, 2, saq.SaslAuthenticateRequest(auth_bytes=b"\0alice\0alice-pw-1234"),
                 sar.SaslAuthenticateResponse(error_code=ErrorCode.none, error_message=None, auth_bytes=b""))
    out += _pair(20, 6, 3, dtq.DeleteTopicsRequest(topics=(dtq.DeleteTopicState(name="orders", topic_id=None),),
                                                   timeout=ZERO),
                 dtr.DeleteTopicsResponse(throttle_time=ZERO, responses=(dtr.DeletableTopicResult(
                     name="orders", topic_id=None, error_code=ErrorCode.none),)))
    out += _pair(30, 3, 4, caq.CreateAclsRequest(creations=(caq.AclCreation(
        resource_type=i8(2), resource_name="*", resource_pattern_type=i8(3), principal="User:bob", host="*",
        operation=i8(2), permission_type=i8(3)),)),
        car.CreateAclsResponse(throttle_time=ZERO, results=(car.AclCreationResult(error_code=ErrorCode.none,
                                                                                  error_message=None),)))
    out += _pair(31, 3, 5, daq.DeleteAclsRequest(filters=(daq.DeleteAclsFilter(
        resource_type_filter=i8(2), resource_name_filter="audit", pattern_type_filter=i8(3),
        principal_filter="User:carol", host_filter=None, operation=i8(1), permission_type=i8(1)),)),
        dar.DeleteAclsResponse(throttle_time=ZERO, filter_results=(dar.DeleteAclsFilterResult(
            error_code=ErrorCode.none, error_message=None, matching_acls=(dar.DeleteAclsMatchingAcl(
                error_code=ErrorCode.none, error_message=None, resource_type=i8(2), resource_name="audit",
                pattern_type=i8(3), principal="User:carol", host="*", operation=i8(3), permission_type=i8(3)),)),)))
    commit_answer = ocr.OffsetCommitResponse(throttle_time=ZERO, topics=(ocr.OffsetCommitResponseTopic(
        name="orders", partitions=(ocr.OffsetCommitResponsePartition(partition_index=i32(0), error_code=ErrorCode.none),)),))
    topics = (ocq.OffsetCommitRequestTopic(name="orders", partitions=(ocq.OffsetCommitRequestPartition(
        partition_index=i32(0), committed_offset=i64(0), committed_metadata=None),)),)
    out += _pair(8, 8, 6, ocq.OffsetCommitRequest(group_id="billing", generation_id_or_member_epoch=i32(-1),
                                                  member_id="", topics=topics), commit_answer)
    out += _pair(8, 8, 7, ocq.OffsetCommitRequest(group_id="billing", generation_id_or_member_epoch=i32(5),
                                                  member_id="consumer-1-abc", topics=topics), commit_answer)
    out += _pair(21, 2, 8, drq.DeleteRecordsRequest(topics=(drq.DeleteRecordsTopic(name="audit", partitions=(
        drq.DeleteRecordsPartition(partition_index=i32(0), offset=i64(-1)),)),), timeout=ZERO),
        drr.DeleteRecordsResponse(throttle_time=ZERO, topics=(drr.DeleteRecordsTopicResult(name="audit", partitions=(
            drr.DeleteRecordsPartitionResult(partition_index=i32(0), low_watermark=i64(4242),
                                             error_code=ErrorCode.none),)),)))
    configs = (iaq.AlterableConfig(name="ssl.key.password", config_operation=i8(0), value=SECRET_VALUE),
               iaq.AlterableConfig(name="log.retention.ms", config_operation=i8(0), value=PLAIN_VALUE))
    out += _pair(44, 1, 9, iaq.IncrementalAlterConfigsRequest(resources=(iaq.AlterConfigsResource(
        resource_type=i8(4), resource_name="1", configs=configs),), validate_only=False),
        iar.IncrementalAlterConfigsResponse(throttle_time=ZERO, responses=(iar.AlterConfigsResourceResponse(
            error_code=ErrorCode.none, error_message=None, resource_type=i8(4), resource_name="1"),)))
    out += _pair(51, 0, 10, asq.AlterUserScramCredentialsRequest(deletions=(), upsertions=(asq.ScramCredentialUpsertion(
        name="bob", mechanism=i8(2), iterations=i32(8192), salt=b"salt-7", salted_password=b"salted-7"),)),
        asr.AlterUserScramCredentialsResponse(throttle_time=ZERO, results=(asr.AlterUserScramCredentialsResult(
            user="bob", error_code=ErrorCode.cluster_authorization_failed, error_message=None),)))
    out += _pair(42, 2, 11, dgq.DeleteGroupsRequest(groups_names=("billing",)), None)
    return out


def capture_bytes() -> bytes:
    return conversation_pcap(messages())
