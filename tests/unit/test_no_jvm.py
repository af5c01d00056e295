"""The unit tier's tripwire (tests/unit/conftest.py) catches any start of Java."""

import subprocess


def test_a_java_child_process_reaches_the_tripwire(java_tripwire):
    done = subprocess.run(["java", "-version"], capture_output=True, text=True)
    assert done.returncode == 1 and "starts no JVM" in done.stderr
    assert java_tripwire.launches() == ["-version"]
    java_tripwire.clear()


def test_a_command_that_starts_spark_reaches_the_tripwire_and_fails(java_tripwire, cli, tmp_path):
    status, _, err = cli("simulate", "--shoes", 10, "--seed", 1, "--out", tmp_path / "data")
    assert status != 0 and err.count("\n") == 1 and "JVM" in err, err
    assert len(java_tripwire.launches()) >= 1
    java_tripwire.clear()
    assert not (tmp_path / "data" / "rounds").exists()
