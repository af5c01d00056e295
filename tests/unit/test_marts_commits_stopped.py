"""A stop while `baccarat marts` commits a run's marts, one Delta commit per mart (pipeline/marts/publish.py)."""

import json
import subprocess
import sys


# write_marts of one run into OUT (argv[1]), Ctrl-C'd as it commits the first mart; then, as the command ends
# (os._exit, as `baccarat` ends), the marts that do not hold the run.
STOPPED_AT_THE_FIRST_MART = """
import json, os, signal, sys, time
from types import SimpleNamespace

import pyarrow as pa

from pipeline.marts import publish
from pipeline.marts.inputs import MARTS
from pipeline.schemas import contract
from pipeline.storage import Store

out = Store.parse(sys.argv[1])
run = SimpleNamespace(run_id="punto_banco-s1-n20", out=out, rule_set=SimpleNamespace(name="punto_banco"))
commit = publish._commit

def stopped_on_the_first(run, name, mart, built):
    if name == MARTS[0]:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)
    return commit(run, name, mart, built)

publish._commit = stopped_on_the_first
publish.replaced_since_read = lambda run: ()
try:
    publish.write_marts(run, {name: pa.table({}) for name in MARTS})
except KeyboardInterrupt:
    print(json.dumps([name for name in MARTS if run.run_id not in out.run_ids(contract(name).table)]), flush=True)
os._exit(0)
"""


def test_a_stop_between_a_runs_mart_commits_waits_for_the_last_one(tmp_path):
    """A Ctrl-C (or SIGTERM) once some of a run's marts were committed ended the command there: `verify` then
    failed (exit 1, a line per mart left out, asking whether its log or its folder was removed by hand) and
    `runs` showed the run's marts `incomplete`, until `marts` ran again. The stop waits for the last commit,
    then stops the command."""
    done = subprocess.run([sys.executable, "-c", STOPPED_AT_THE_FIRST_MART, str(tmp_path / "data")],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout) == []
