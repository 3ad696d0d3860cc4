"""Run each atheris fuzz target briefly: a finding fails the test with the crashing input in the output."""

import subprocess
import sys

import pytest

RUNS = 20_000


@pytest.mark.parametrize("target", ["frames", "requests", "records"])
def test_fuzz_target_finds_nothing(target, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "tests.fuzz.fuzz_targets", target, f"-runs={RUNS}", "-max_len=4096",
         f"-artifact_prefix={tmp_path}/", "-print_final_stats=1"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"Done {RUNS} runs" in result.stderr, result.stderr[-2000:]
