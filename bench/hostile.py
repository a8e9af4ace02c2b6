"""What a hostile server costs a client call: time and peak memory (issue 11, items 1 and 4).

Each scenario runs in its own subprocess (so its peak RSS is its own) against the fault
harness on 127.0.0.1, with the client's default settings unless said:

- gzip-bomb: a 1 MiB gzip body that inflates to 1 GiB of JSON whitespace (also with
  ``max_response_bytes`` at 16 MiB, which clients before the cap do not accept);
- endless: a chunked body that never ends (the subprocess is limited to 3 GiB of address
  space, so a client without a cap ends in MemoryError rather than taking the machine);
- drip: a 20-byte body sent one byte a second, to a client with timeout (2, 2);
- drip-headers: a header sent one byte a second (the server gives up after 120 s).

Run ``python bench/hostile.py``; to measure another version of the package, put it first
on PYTHONPATH (e.g. an old checkout) and run the same command.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ("gzip-bomb", "gzip-bomb-cap-16mib", "endless", "drip", "drip-headers")


def _run(name: str) -> dict[str, object]:
    sys.path.append(str(ROOT))
    import searchkit as sk
    from tests.faults.harness import FaultServer, drip, drip_head, endless, gzip_bomb

    action = {
        "gzip-bomb": lambda: gzip_bomb(1 << 30),
        "gzip-bomb-cap-16mib": lambda: gzip_bomb(1 << 30),
        "endless": endless,
        "drip": lambda: drip(b"[" + b" " * 18 + b"]", every=1.0),
        "drip-headers": lambda: drip_head(every=1.0),
    }[name]()
    options: dict[str, object] = {"username": "u", "password": "p", "max_retries": 0}
    if name.startswith("drip"):
        options["timeout"] = (2.0, 2.0)
    if name.endswith("cap-16mib"):
        options["max_response_bytes"] = 16 << 20
    with FaultServer(max_hang=120) as server:
        server.script("GET", then=action)
        started = time.monotonic()
        try:
            client = sk.Client(base_url=server.url, **options)  # type: ignore[arg-type]
            client.list_indexes()
            outcome = "returned"
        except MemoryError:
            outcome = "MemoryError"
        except Exception as exc:
            outcome = f"{type(exc).__name__}: {str(exc)[-90:]}"
        elapsed = time.monotonic() - started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "scenario": name,
        "seconds": round(elapsed, 2),
        "peak_rss_mib": round(peak_mib),
        "outcome": outcome,
    }


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        if sys.argv[2] == "endless":
            limit = 3 << 30
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        print(json.dumps(_run(sys.argv[2])))
        return
    import searchkit

    print(f"searchkit from {Path(searchkit.__file__).parent}")
    for name in SCENARIOS:
        out = subprocess.run(
            [sys.executable, __file__, "--one", name],
            capture_output=True,
            text=True,
            env=os.environ,
            timeout=300,
            check=False,
        )
        lines = out.stdout.strip().splitlines()
        print(lines[-1] if lines else f"{name}: no result ({out.stderr.strip()[-200:]})")


if __name__ == "__main__":
    main()
