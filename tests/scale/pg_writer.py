"""Writer subprocess for the PostgreSQL crash and concurrency tests.

usage: pg_writer.py DSN TAG COUNT
Appends turns TAG#k (k = turns of TAG already stored + 1 ...) one transaction each and prints
``ACK <id> <k>`` only after commit returned; a failed write prints ``FAIL <k> <error>`` and exits 3.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from scale_turns import make_turn  # noqa: E402

from v22sdk.errors import MemoryStoreError  # noqa: E402
from v22sdk.memory.postgres import PostgresTier  # noqa: E402

dsn, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = PostgresTier(dsn, pool_size=1, timeout_s=5)
done = store.count_where(tag)
print("READY", flush=True)
for k in range(done + 1, done + 1 + count):
    try:
        (t,) = store.commit([make_turn(k, tag)])
    except MemoryStoreError as e:
        print(f"FAIL {k} {e}", flush=True)
        sys.exit(3)
    print(f"ACK {t.id} {k}", flush=True)
store.close()
