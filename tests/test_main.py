"""The ``trainbill`` entry point: a Ctrl-C at any moment is one line, never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO, SEED

#: Starts like the ``trainbill`` console script (import the entry module, call ``run``) but
#: says "ready" just before ``run``, so the SIGINT lands in trainbill's start-up (the CLI's
#: imports take a few tenths of a second). The interpreter's own start-up and the tiny entry
#: module before it (a few tens of milliseconds) run before any code that could catch it.
_LAUNCH = (
    "import sys; from trainbill.__main__ import run; sys.argv = ['trainbill', 'forecast', sys.argv[1]]; "
    "sys.stderr.write('ready\\n'); sys.stderr.flush(); run()"
)


# At least 20 ms after "ready": the launcher's own last bytecodes before ``run()`` are not ours.
@pytest.mark.parametrize("delay_s", [0.02, 0.05, 0.15, 0.3])
def test_sigint_during_start_up_is_one_line(delay_s: float) -> None:
    """SIGINT while the CLI's imports load (or later) ends in 'interrupted', no traceback."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-c", _LAUNCH, str(SEED)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    assert proc.stderr.readline() == "ready\n"
    time.sleep(delay_s)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    assert "KeyboardInterrupt" not in err, err
    # Interrupted (130 from run(); click's "Aborted!" and 1 once a command is running) or, on a
    # fast machine at the longest delay, already finished (0).
    assert proc.returncode in {0, 1, 130}, (proc.returncode, err)
    if proc.returncode == 130:
        assert err.strip() == "trainbill: interrupted"
