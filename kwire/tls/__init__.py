"""TLS between TCP and Kafka: detect it, decrypt it with an NSS key log, say what could not be seen.

Sans-IO (no files, sockets or clock): a key log file is read by the command that owns it
(kwire.capture.follow follows one clients are still writing) and given here as text. The pieces, in the order bytes meet them:
- detect.TlsDetector: a StreamFactory for kwire.tcp; TLS connections get a stream.TlsStream, the
  others the inner (Kafka) consumer itself;
- records.RecordReader: TLS records out of each direction's bytes, resynchronising after gaps;
- session.TlsSession + direction.Direction: handshake (handshake.py), key schedules
  (keyschedule.py) and record protection (ciphers.py) for the suites of suites.py;
- keylog.KeyLog: the secrets, keyed by ClientHello random; info.TlsInfo: the per-connection report.
"""

from kwire.tls.detect import TlsDetector
from kwire.tls.info import RecordProblem, TlsInfo
from kwire.tls.keylog import ClientSecrets, FollowedKeyLog, KeyLog, KeySource
from kwire.tls.stream import TlsStream

__all__ = ["ClientSecrets", "FollowedKeyLog", "KeyLog", "KeySource", "RecordProblem", "TlsDetector", "TlsInfo", "TlsStream"]
