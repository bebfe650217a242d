"""Writer subprocess for the crash and concurrency tests.

usage: _writer.py DB TAG COUNT [FSIZE_LIMIT]
Appends turns TAG#k (k = turns of TAG already stored + 1 ...) one transaction each, through the
L3 tier that TieredMemory writes through, and prints ``ACK <id> <k>`` only after commit returned.
With FSIZE_LIMIT, RLIMIT_FSIZE is set (SIGXFSZ ignored) so the disk "fills up" at that size; a
failed write prints ``FAIL <k> <error>`` and the process exits 3.
"""

import os
import resource
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _gen import make_turn  # noqa: E402

from v22sdk.errors import MemoryStoreError  # noqa: E402
from v22sdk.memory.sqlite_tier import SQLiteTier  # noqa: E402

db, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
if len(sys.argv) > 4:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    lim = int(sys.argv[4])
    resource.setrlimit(resource.RLIMIT_FSIZE, (lim, lim))
store = SQLiteTier(db)
done = store._query("SELECT COUNT(*) FROM turns WHERE conversation = ?", (tag,))[0][0]
print("READY", flush=True)
for k in range(done + 1, done + 1 + count):
    try:
        (t,) = store.commit([make_turn(k, tag)])
    except MemoryStoreError as e:
        print(f"FAIL {k} {e}", flush=True)
        sys.exit(3)
    print(f"ACK {t.id} {k}", flush=True)
store.close()
