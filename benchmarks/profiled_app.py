"""``streamlit run app.py`` with every script run profiled (cProfile in the script thread), for
``bench_upload.py --profile DIR``: run N's profile goes to DIR/run-N.prof and one line per run to DIR/runs.txt
(wall and the script thread's CPU time). The profiles count the script thread's CPU time (``time.thread_time``),
not wall time: on a busy machine a wall-clock profile charges the waits for the GIL and for a core to whatever
line was running. With FAIRVIZ_PROFILE_TIMES_ONLY=1 the runs are only timed (cProfile's own cost, 2–3× on this
code, left out). Only the script thread is profiled: the server's event loop (turning the run's messages into
bytes and sending them) is outside, and is what the server process's CPU time adds.
"""
from __future__ import annotations

import cProfile
import itertools
import os
import sys
import time
from pathlib import Path

from streamlit.runtime.scriptrunner import script_runner

OUT = Path(os.environ["FAIRVIZ_PROFILE_DIR"])
TIMES_ONLY = os.environ.get("FAIRVIZ_PROFILE_TIMES_ONLY") == "1"
_original = script_runner.ScriptRunner._run_script
_runs = itertools.count(1)


def _profiled(self, rerun_data):
    number, profile = next(_runs), None if TIMES_ONLY else cProfile.Profile(time.thread_time)
    wall, cpu = time.perf_counter(), time.thread_time()
    if profile:
        profile.enable()
    try:
        return _original(self, rerun_data)
    finally:
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        if profile:
            profile.disable()
            profile.dump_stats(OUT / f"run-{number}.prof")
        with open(OUT / "runs.txt", "a") as log:
            log.write(f"{number} {wall * 1000:.1f} {cpu * 1000:.1f}\n")


script_runner.ScriptRunner._run_script = _profiled

if __name__ == "__main__":
    from streamlit.web.cli import main
    sys.argv = ["streamlit", "run", *sys.argv[1:]]
    sys.exit(main())
