"""The benchmark runs (small here; `python -m probes.bench` probes 200)."""

from probes import bench


def test_the_benchmark_finishes_within_the_interval(capsys):
    code = bench.main(["--endpoints", "12", "--timeout", "1", "--interval", "60"])

    out = capsys.readouterr().out
    assert code == 0
    assert "probed 12 endpoints in" in out
    assert "6 up, 3 timeout, 3 down" in out
    assert "endpoints probed per second" in out
