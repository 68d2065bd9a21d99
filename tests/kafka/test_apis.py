from kwire.kafka.apis import APIS, api_name, request_header_version, response_header_version, version_known


def test_names_and_ranges():
    assert api_name(1) == "Fetch"
    assert api_name(78) == "ShareFetch"
    assert api_name(9) == "OffsetFetch"
    assert api_name(9999) == "Unknown(9999)"
    assert version_known(1, 0) and version_known(1, 18) and not version_known(1, 19)
    assert APIS[9].max_version >= 10


def test_header_versions_follow_flexible_versions():
    assert request_header_version(1, 11) == 1
    assert request_header_version(1, 12) == 2
    assert response_header_version(1, 11) == 0
    assert response_header_version(1, 12) == 1


def test_quirk_api_versions_always_answers_with_header_v0():
    assert request_header_version(18, 3) == 2
    assert response_header_version(18, 3) == 0
    assert response_header_version(18, 4) == 0


def test_quirk_controlled_shutdown_v0_has_no_client_id():
    assert request_header_version(7, 0) == 0
    assert request_header_version(7, 1) == 1
