"""dyno_report: lets `dyno tune --command` tune a Python training program (standard library only).

dyno runs the program once per trial with the knob values of that trial in the environment and
reads what the program reports (README, "Tune any training program"). Two lines wrap a loop:

    knobs, report = dyno_report.start(batch_size=64, num_workers=0, amp="off")   # defaults
    ...                                        # build the loader and model from knobs["..."]
    report.step(len(targets), loss)            # after each optimizer step
    report.eval("accuracy", accuracy)          # after each evaluation
    report.done()                              # at the end

The knobs the program reads from `knobs` are the ones it acknowledges (written before its first
window, and again for any read later): a knob it never reads is not acknowledged, and dyno
refuses that trial, so a knob the program ignores never wins. Outside dyno (no DYNO_REPORT in the
environment) reporting does nothing, so the same script runs on its own, with the defaults or with
the DYNO_KNOB_<NAME> variables set, as `sh best-config.sh` runs the tuned configuration. Only rank
0 (torch.distributed's once it is set up, else RANK, else SLURM_PROCID, else an MPI launcher's
OMPI_COMM_WORLD_RANK or PMI_RANK, unset or 0) writes, for the job: a step's items count once per rank
(WORLD_SIZE, else SLURM_STEP_NUM_TASKS, else OMPI_COMM_WORLD_SIZE or PMI_SIZE). Reading a knob
(knobs["x"], knobs.get("x"), dict(knobs), f(**knobs)) is what acknowledges it: those read before the
first window or evaluation in one knobs line with it, one read later at once. ddp.world_size is acknowledged when it is the job's count of
ranks.
"""

import json
import math
import os
import sys
import time

__all__ = ["start", "knobs", "seed", "Reporter", "environment_name"]


class Knobs(dict):
    """The trial's knob values; remembers which ones the program read. A knob start() was not given
    a default for is read from its DYNO_KNOB_<NAME> when the point does not hold it, typed as get()'s
    default."""

    def __init__(self, values):
        super().__init__(values)
        self.read = set()

    def __getitem__(self, name):
        self._note(name)
        if not super().__contains__(name) and environment_name(name) in os.environ:
            return _typed(environment_name(name), os.environ[environment_name(name)], None)
        return super().__getitem__(name)

    def get(self, name, default=None):
        self._note(name)
        if not super().__contains__(name) and environment_name(name) in os.environ:
            return _typed(environment_name(name), os.environ[environment_name(name)], default)
        return super().get(name, default)

    def __iter__(self):
        # Not dict's own iteration: dict(knobs) and f(**knobs) then read each knob through
        # __getitem__, and so acknowledge it.
        return iter(list(super().keys()))

    def _note(self, name):
        new = name not in self.read
        self.read.add(name)
        if new and getattr(self, "on_read", None):
            self.on_read()  # read late: the Reporter acknowledges it now, not at its next line (dyno may stop the program first)


def environment_name(knob):
    """DYNO_KNOB_<NAME>: the knob's name in upper case, each byte of its UTF-8 form other than an
    ASCII letter or digit as `_` (as dyno names it: "café" is DYNO_KNOB_CAF__)."""
    return "DYNO_KNOB_" + "".join(chr(b).upper() if chr(b).isascii() and chr(b).isalnum() else "_" for b in knob.encode())


def _typed(variable, text, default):
    """`text` as the type of `default`: as written for a string, true/false for a bool, JSON for a number."""
    if isinstance(default, str):
        return text
    if isinstance(default, bool):
        if text not in ("true", "false"):
            raise ValueError(f"{variable}={text!r}: expected true or false")
        return text == "true"
    try:
        value = json.loads(text)
    except ValueError:
        if default is None:
            return text
        raise ValueError(f"{variable}={text!r}: expected a number") from None
    if isinstance(default, (int, float)) and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise ValueError(f"{variable}={text!r}: expected a number")
    if isinstance(default, int) and not isinstance(value, int):
        raise ValueError(f"{variable}={text!r}: expected a whole number")
    return value


def knobs(**defaults):
    """The trial's knob values: `defaults`; over them DYNO_POINT's JSON file (a trial's whole point,
    best-config.sh's best-point.json); over those each one's DYNO_KNOB_<NAME> (the same values in a
    trial; in best-config.sh, what a user may edit), typed as its default, else as the point's value.
    A DYNO_POINT file that is not there is skipped."""
    values = dict(defaults)
    path = os.environ.get("DYNO_POINT")
    if path and os.path.exists(path):
        with open(path) as f:
            values.update(json.load(f))
    for name in list(values):
        variable = environment_name(name)
        if variable in os.environ:
            values[name] = _typed(variable, os.environ[variable], defaults.get(name, values[name]))
    return Knobs(values)


def _launcher_value(names, default):
    """The first of a launcher's variables that is set, as a whole number (a rank or a rank count)."""
    for name in names:
        if name in os.environ:
            return _typed(name, os.environ[name], default)
    return default


def _plain(value):
    """A Python number for a NumPy or torch scalar (json writes neither)."""
    return value.item() if hasattr(value, "item") else value


def _number(value):
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


class Reporter:
    """Appends the report protocol's JSON lines to DYNO_REPORT, one flushed line per event.

    step() times the loop itself: once `window_seconds` have passed since the last window, it writes
    one window of the items and seconds since then, with the mean loss of its steps (summed as
    tensors and converted to a float only then, so that a GPU loop is not synchronised at each step)."""

    def __init__(self, window_seconds=0.5, path=None, knobs=None):
        self.path = path if path is not None else os.environ.get("DYNO_REPORT")
        # torchrun sets RANK and WORLD_SIZE, srun SLURM_PROCID and SLURM_STEP_NUM_TASKS, Open MPI's mpirun
        # OMPI_COMM_WORLD_RANK and _SIZE, MPICH's and Intel MPI's PMI_RANK and PMI_SIZE: rank 0 reports for
        # the job, its items counted once for each rank (data parallelism steps every rank alike).
        # (SLURM_STEP_NUM_TASKS: an srun step's; sbatch sets SLURM_NTASKS for a one-process batch script too.)
        # Ranks started otherwise (torch.multiprocessing.spawn) are told by torch.distributed once it is set up.
        self.rank = _launcher_value(("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"), 0)
        self.ranks = _launcher_value(("WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"), 1)
        self._distributed = False
        self.window_seconds = float(window_seconds)
        self._start = time.perf_counter()
        # A program started again within its trial (torchrun's TORCHELASTIC_RESTART_COUNT above 0)
        # counts from the trial's start (DYNO_TRIAL_START), read once: the clock never goes back.
        self._before = 0.0
        try:
            if int(os.environ.get("TORCHELASTIC_RESTART_COUNT") or 0) > 0 and os.environ.get("DYNO_TRIAL_START"):
                self._before = max(0.0, time.time() - float(os.environ["DYNO_TRIAL_START"]))
        except ValueError:
            pass  # not numbers: this attempt's own clock
        self._file = open(self.path, "a") if self.path else None
        self._steps = 0
        self._items = 0
        self._loss = None
        self._window_start = None
        self._last_step = None
        self._knobs = knobs
        self._acknowledged = set()
        self._reported = False  # a line other than knobs written: what is read after it is acknowledged at once
        if knobs is not None:
            knobs.on_read = lambda: self._acknowledge_read_knobs() if self._reported else None

    def _job(self):
        """This process's rank and the ranks' count: torch.distributed's once it is set up (asked until
        then, and kept after), else the environment's."""
        if not self._distributed:
            distributed = sys.modules.get("torch.distributed")
            if distributed is not None and distributed.is_available() and distributed.is_initialized():
                self.rank, self.ranks = distributed.get_rank(), distributed.get_world_size()
                self._distributed = True
        return self.rank, self.ranks

    def _acknowledge_read_knobs(self):
        if self._knobs is None:
            return
        # ddp.world_size is applied by whoever started the ranks: acknowledged when it is their count.
        if "ddp.world_size" in self._knobs and dict.__getitem__(self._knobs, "ddp.world_size") == self._job()[1]:
            self._knobs.read.add("ddp.world_size")
        if not self._knobs.read <= self._acknowledged:
            new = self._knobs.read - self._acknowledged
            self.knobs({name: dict.__getitem__(self._knobs, name) for name in sorted(new) if name in self._knobs})
            self._acknowledged |= new  # (a knob read and not in the point, too)

    def _write(self, event):
        self._reported = self._reported or event["event"] != "knobs"
        if self._file and self._job()[0] == 0:
            # (default=str: a default that is no JSON value, as a torch dtype, is written as its text)
            self._file.write(json.dumps(event, default=str) + "\n")
            self._file.flush()

    def elapsed(self):
        """Seconds since the Reporter was made: the training's clock (the interpreter's start-up and
        imports are the same for every configuration and not counted). A program started again within
        its trial counts from the trial's start, the attempts before it included."""
        return self._before + time.perf_counter() - self._start

    def knobs(self, applied):
        """Says which knobs the program applied, with their values: an unacknowledged knob makes the trial invalid.
        A knob said so is not said again with the value it was read as."""
        self._acknowledged |= set(applied)
        self._write({"event": "knobs", "applied": applied})

    def window(self, items, seconds, loss=None):
        self._acknowledge_read_knobs()
        event = {"event": "window", "items": _plain(items), "seconds": _plain(seconds)}
        if loss is not None:
            event["loss"] = _number(loss)
        self._write(event)

    def step(self, items, loss=None):
        """Counts one optimizer step of `items` samples of this rank's (the job's: that times the
        ranks); writes a window every `window_seconds`."""
        now = self._last_step = time.perf_counter()
        if self._window_start is None:  # the first step's end opens the first window
            self._window_start = now
            return
        self._steps += 1
        self._items = self._items + items * self._job()[1]  # (a NumPy or torch count stays one until the window's end)
        if loss is not None:
            loss = loss.detach().float() if hasattr(loss, "detach") else loss  # summed in float32, not a half type
            self._loss = loss if self._loss is None else self._loss + loss
        if now - self._window_start >= self.window_seconds:
            # float() waits for the device's queued work: the window ends after it, and the next
            # starts there, so that no device time falls between two windows.
            loss_value = None if self._loss is None else float(self._loss) / self._steps
            end = time.perf_counter()
            self.window(self._items, end - self._window_start, loss_value)
            self._steps = self._items = 0
            self._loss = None
            self._window_start = end

    def eval(self, metric, value):
        """Reports an evaluation; a time-to-target trial ends at the first that meets --target."""
        self._acknowledge_read_knobs()
        self._write({"event": "eval", "metric": metric, "value": _number(value), "elapsed": self.elapsed()})
        if self._window_start is not None:  # the time since the last step (the evaluation's) is not the window's
            now = time.perf_counter()
            # (from the window's start when a window closed at the last step: its wait is already out)
            self._window_start += now - max(self._last_step, self._window_start)
            self._last_step = now

    def done(self):
        self._acknowledge_read_knobs()
        self._write({"event": "done"})
        if self._file:
            self._file.close()
            self._file = None


def start(window_seconds=0.5, **defaults):
    """The trial's knobs (over `defaults`) and a Reporter that acknowledges those the program reads."""
    values = knobs(**defaults)
    return values, Reporter(window_seconds=window_seconds, knobs=values)


def seed(default=0):
    """The trial's seed (DYNO_SEED: time-to-target runs repeat with the next seeds), else `default`."""
    return int(os.environ.get("DYNO_SEED", default))
