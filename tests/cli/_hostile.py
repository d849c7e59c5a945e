"""Run ``trainbill`` in-process once per hostile path for one (command, option); print JSON.

Used by ``test_file_options.py`` in a subprocess of its own, so a case that hangs or reads
``/dev/zero`` into memory costs that subprocess (killed at its timeout), never the test run.
Each case is bounded by ``signal.alarm`` as well, so the report names the case that hung.
"""

from __future__ import annotations

import contextlib
import io
import json
import resource
import signal
import sys
import time
import traceback
from typing import Any

#: Seconds one case may take before it counts as a hang.
CASE_TIMEOUT_S = 10


class _Hung(BaseException):
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise _Hung


def _run(argv: list[str]) -> dict[str, Any]:
    from trainbill.cli import main

    err, out = io.StringIO(), io.StringIO()
    start = time.monotonic()
    signal.alarm(CASE_TIMEOUT_S)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                main(argv)
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    except _Hung:
        code = -1
        err.write(f"HUNG past {CASE_TIMEOUT_S} s\n")
    except BaseException:  # noqa: BLE001 - a traceback: the defect this test looks for
        code = -2
        err.write(traceback.format_exc())
    finally:
        signal.alarm(0)
    return {
        "argv": argv,
        "code": code,
        "stderr": err.getvalue()[-2000:],
        "seconds": time.monotonic() - start,
        "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }


def main() -> None:
    """argv: one JSON list of argument lists."""
    signal.signal(signal.SIGALRM, _alarm)
    cases = json.loads(sys.argv[1])
    print(json.dumps([_run(argv) for argv in cases]))


if __name__ == "__main__":
    main()
