"""python/dyno_report.py: the knobs a program reads, from its defaults, DYNO_KNOB_<NAME> and DYNO_POINT.

Usage: dyno_report_test.py SOURCE_DIR (exit 0 when every check holds)."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(sys.argv[1], "python"))
import dyno_report  # noqa: E402

DEFAULTS = dict(batch_size=64, amp="off", batched_fetch=False, lr=0.001, **{"ddp.world_size": 1})


def knobs_with(environment):
    saved = dict(os.environ)
    try:
        for name in list(os.environ):
            if name.startswith("DYNO_"):
                del os.environ[name]
        os.environ.update(environment)
        return dict(dyno_report.knobs(**DEFAULTS))
    finally:
        os.environ.clear()
        os.environ.update(saved)


# Without dyno: the defaults.
assert knobs_with({}) == DEFAULTS, knobs_with({})

# best-config.sh's environment: each knob typed as its default.
tuned = knobs_with({"DYNO_KNOB_BATCH_SIZE": "256", "DYNO_KNOB_AMP": "bf16", "DYNO_KNOB_BATCHED_FETCH": "true",
                    "DYNO_KNOB_LR": "0.002", "DYNO_KNOB_DDP_WORLD_SIZE": "2"})
assert tuned == dict(batch_size=256, amp="bf16", batched_fetch=True, lr=0.002, **{"ddp.world_size": 2}), tuned

# A knob the program reads without having given start() its default: in a trial DYNO_POINT holds
# it; in best-config.sh's run only its DYNO_KNOB_<NAME> does, typed as get()'s default.
saved = dict(os.environ)
try:
    for name in list(os.environ):
        if name.startswith("DYNO_"):
            del os.environ[name]
    os.environ.update({"DYNO_KNOB_NUM_WORKERS": "4", "DYNO_KNOB_OPTIMIZER": "sgd"})
    late = dyno_report.knobs(batch_size=64)
    assert late.get("num_workers", 0) == 4, late.get("num_workers", 0)
    assert late["optimizer"] == "sgd" and late.get("prefetch", 2) == 2
    assert {"num_workers", "optimizer", "prefetch"} <= late.read
finally:
    os.environ.clear()
    os.environ.update(saved)

# A knob's variable is named byte by byte, as dyno names it: "café" is DYNO_KNOB_CAF__ (é is two bytes).
assert dyno_report.environment_name("café") == "DYNO_KNOB_CAF__"
assert dyno_report.environment_name("ddp.world_size") == "DYNO_KNOB_DDP_WORLD_SIZE"

# A trial's DYNO_POINT file is the whole point, over the defaults; a DYNO_KNOB_<NAME> set wins over it
# (in a trial they agree; in best-config.sh the variable is what a user edits). A DYNO_POINT that is
# not there (best-config.sh copied without best-point.json) is skipped.
# A knob without a default is the point's until its variable is edited too, typed as the point's value.
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump({"batch_size": 512, "amp": "bf16", "momentum": 0.9, "layers": 4}, f)
try:
    point = knobs_with({"DYNO_KNOB_BATCH_SIZE": "256", "DYNO_KNOB_MOMENTUM": "0.5", "DYNO_POINT": f.name})
    assert point["batch_size"] == 256 and point["amp"] == "bf16" and point.get("momentum", 0.0) == 0.5 and point["layers"] == 4, point
    knobs_with({"DYNO_KNOB_LAYERS": "4.5", "DYNO_POINT": f.name})
except ValueError as error:
    assert "DYNO_KNOB_LAYERS='4.5': expected a whole number" in str(error), str(error)
else:
    raise AssertionError("DYNO_KNOB_LAYERS=4.5 was accepted for a whole-number knob")
finally:
    os.unlink(f.name)
assert knobs_with({"DYNO_POINT": "/nonexistent/best-point.json"}) == DEFAULTS

# A value that is not of its knob's type names the variable, the value and what is valid.
for variable, text, expected in [("DYNO_KNOB_BATCHED_FETCH", "yes", "expected true or false"),
                                 ("DYNO_KNOB_BATCH_SIZE", "big", "expected a number"),
                                 ("DYNO_KNOB_LR", "true", "expected a number")]:
    try:
        knobs_with({variable: text})
    except ValueError as error:
        assert variable in str(error) and repr(text) in str(error) and expected in str(error), str(error)
    else:
        raise AssertionError(f"{variable}={text} was accepted")

# Under a launcher rank 0 reports for the job: a step's items once per rank; another rank writes nothing.
def window_items(environment):
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory() as folder:
        try:
            for name in list(os.environ):
                if name.startswith("DYNO_") or name in ("RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS") or name.startswith(("OMPI_", "PMI_")):
                    del os.environ[name]
            os.environ.update(environment)
            report = dyno_report.Reporter(window_seconds=0, path=os.path.join(folder, "report.jsonl"))
            for _ in range(3):
                report.step(8)
            report.done()
            lines = [json.loads(line) for line in open(os.path.join(folder, "report.jsonl"))] if os.path.exists(os.path.join(folder, "report.jsonl")) else []
            return [line["items"] for line in lines if line["event"] == "window"]
        finally:
            os.environ.clear()
            os.environ.update(saved)


assert window_items({}) == [8, 8], window_items({})
assert window_items({"RANK": "0", "WORLD_SIZE": "4"}) == [32, 32], window_items({"RANK": "0", "WORLD_SIZE": "4"})
assert window_items({"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "2"}) == [16, 16]
assert window_items({"SLURM_PROCID": "1", "SLURM_STEP_NUM_TASKS": "2"}) == []
# An sbatch script of one process: SLURM_NTASKS is the allocation's, not this job's ranks.
assert window_items({"SLURM_PROCID": "0", "SLURM_NTASKS": "4"}) == [8, 8]
# mpirun's ranks (Open MPI's, then MPICH's and Intel MPI's variables).
assert window_items({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"}) == [16, 16]
assert window_items({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"}) == []
assert window_items({"PMI_RANK": "0", "PMI_SIZE": "3"}) == [24, 24]
assert window_items({"PMI_RANK": "2", "PMI_SIZE": "3"}) == []

# An evaluation's time is left out of the windows, and only once: a window that closed at the step
# before it already ended after that step's wait for the device (here 1 s), so the next window keeps
# its own length. A fake clock: each read advances it by the step.
class Clock:
    def __init__(self):
        self.now = 0.0
        self.ticks = []

    def __call__(self):
        self.now += self.ticks.pop(0) if self.ticks else 0.0
        return self.now


clock, real_clock = Clock(), dyno_report.time.perf_counter
dyno_report.time.perf_counter = clock
try:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "report.jsonl")
        clock.ticks = [0.0]
        report = dyno_report.Reporter(window_seconds=1.0, path=path)
        clock.ticks = [0.5, 1.0, 1.0]      # opening step at 0.5; a step at 1.5 closes the window after a 1 s wait (2.5)
        report.step(8)
        report.step(8)
        clock.ticks = [3.0, 0.0]           # an evaluation of 3 s: 5.5
        report.eval("accuracy", 0.5)
        clock.ticks = [0.6, 0.6, 0.0]      # two steps of 0.6 s: the next window is 1.2 s long
        report.step(8)
        report.step(8)
        report.done()
        windows = [json.loads(line) for line in open(path) if '"window"' in line]
    assert [round(w["seconds"], 6) for w in windows] == [2.0, 1.2], windows
finally:
    dyno_report.time.perf_counter = real_clock

# A program started again within its trial (torchrun's restarts) times its evaluations from the
# trial's start, so that they never go back before the first attempt's.
saved = dict(os.environ)
try:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "report.jsonl")
        os.environ["DYNO_TRIAL_START"] = "%.6f" % (dyno_report.time.time() - 100)
        os.environ["TORCHELASTIC_RESTART_COUNT"] = "0"
        dyno_report.Reporter(window_seconds=0.0, path=path).eval("accuracy", 0.5)
        os.environ["TORCHELASTIC_RESTART_COUNT"] = "1"
        dyno_report.Reporter(window_seconds=0.0, path=path).eval("accuracy", 0.6)
        first, again = [json.loads(line)["elapsed"] for line in open(path)]
    assert first < 5 and 100 <= again < 105, (first, again)
finally:
    os.environ.clear()
    os.environ.update(saved)

# What a program does with its knobs and counts, as numbers of NumPy and torch, and dict(knobs) or
# f(**knobs), still writes a report dyno reads; a knob is acknowledged as soon as it is read.
import torch  # noqa: E402 (the Python dyno's tests run has torch)

saved = dict(os.environ)
try:
    for name in list(os.environ):
        if name.startswith("DYNO_"):
            del os.environ[name]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "report.jsonl")
        values = dyno_report.knobs(batch_size=64, amp="off", dtype=torch.float32, **{"ddp.world_size": 1})
        report = dyno_report.Reporter(window_seconds=0.0, path=path, knobs=values)
        values["batch_size"]
        assert not os.path.exists(path) or open(path).read() == ""  # with the first window, in one line
        report.step(torch.tensor(8))
        report.step(torch.tensor(8))
        lines = [json.loads(line) for line in open(path)]
        # ddp.world_size with it, being this job's count of ranks (1)
        assert lines[0] == {"event": "knobs", "applied": {"batch_size": 64, "ddp.world_size": 1}}, lines
        settings = dict(values)  # reads every knob: those not read yet are acknowledged at once, before the next window
        lines = [json.loads(line) for line in open(path)]
        late = {}
        for line in lines[2:]:
            assert line["event"] == "knobs", lines
            late.update(line["applied"])
        assert late == {"amp": "off", "dtype": "torch.float32"}, lines
        report.step(torch.tensor(8).numpy())
        report.done()
        lines = [json.loads(line) for line in open(path)]
        applied = {}
        for line in lines:
            if line["event"] == "knobs":
                applied.update(line["applied"])
        assert applied == {"batch_size": 64, "amp": "off", "dtype": "torch.float32", "ddp.world_size": 1}, applied
        assert [line["items"] for line in lines if line["event"] == "window"] == [8, 8], lines
finally:
    os.environ.clear()
    os.environ.update(saved)

# A knob the program states with report.knobs() (the value in effect) is not stated again with the
# value it was read as: dyno sees what was applied, and refuses a point whose value had no effect.
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "report.jsonl")
    values = dyno_report.Knobs({"persistent_workers": True, "num_workers": 0})
    report = dyno_report.Reporter(window_seconds=0.0, path=path, knobs=values)
    report.knobs({"persistent_workers": values["persistent_workers"] and values["num_workers"] > 0})
    report.step(8)
    report.step(8)
    applied = {}
    for line in open(path):
        event = json.loads(line)
        if event["event"] == "knobs":
            applied.update(event["applied"])
    assert applied == {"persistent_workers": False, "num_workers": 0}, applied

# An integer knob's variable holds a whole number.
try:
    knobs_with({"DYNO_KNOB_BATCH_SIZE": "2.5"})
    raise AssertionError("2.5 was taken for an integer knob")
except ValueError as e:
    assert "expected a whole number" in str(e), e

print("ok")
