"""Drives Optuna's TPE sampler over a dyno search space, each trial a real `dyno train` run with
the same trial settings as `dyno tune` (same warm-up, measured steps, time cap and noise-driven
stop), so its result is comparable with dyno's strategies at the same trial budget.

Prints one JSON object: {"best_point": {...}, "best_samples_per_second": x, "trials": n,
"wall_time_s": t, "points": [...]}.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time

import optuna


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dyno", required=True)
    p.add_argument("--space", required=True, help="space JSON with list-valued axes")
    p.add_argument("--workload", required=True)
    p.add_argument("--trials", type=int, required=True)
    p.add_argument("--measure-steps", type=int, default=150)
    p.add_argument("--warmup-steps", type=int, default=10)
    p.add_argument("--trial-cap", type=float, default=30)
    p.add_argument("--set", action="append", default=[], help="knob=value for every trial")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()

    axes = json.load(open(a.space))["axes"]
    base = {"workload": a.workload, "stop_at_target": False, "final_eval": False, "measure_rel_ci": 0.03,
            "log_every_steps": 10, "warmup_steps": a.warmup_steps,
            "max_steps": a.warmup_steps + a.measure_steps, "time_limit_s": a.trial_cap}
    for s in a.set:
        k, v = s.split("=", 1)
        try:
            base[k] = json.loads(v)  # numbers, true/false
        except ValueError:
            base[k] = v  # names: cpu, tiny, retain, ...
    workdir = tempfile.mkdtemp(prefix="dyno-optuna-")
    points = []

    def objective(trial):
        point = {k: trial.suggest_categorical(k, v) for k, v in axes.items()}
        config = dict(base, **point)
        path = os.path.join(workdir, f"t{trial.number}")
        with open(path + ".config.json", "w") as f:
            json.dump(config, f)
        r = subprocess.run([a.dyno, "train", "--config", path + ".config.json", "--out", path + ".json", "--no-progress"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        value = 0.0
        if r.returncode == 0:
            value = json.load(open(path + ".json"))["summary"]["samples_per_second"]
        points.append({"point": point, "samples_per_second": value, "exit": r.returncode})
        return value

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=a.seed))
    start = time.time()
    try:
        study.optimize(objective, n_trials=a.trials)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps({"best_point": study.best_params, "best_samples_per_second": study.best_value,
                      "trials": len(study.trials), "wall_time_s": time.time() - start, "points": points}))


if __name__ == "__main__":
    main()
