// Time caps for --objective time-to-target trials: how long a `dyno train` child may train before
// it is stopped and recorded as not having reached the target.
#pragma once

namespace dyno {

class Tuner;

// While the grid and the LR refinement run: a trial that has not reached the target by the best
// time so far, plus a margin for run-to-run noise (x1.3 + 5 s), cannot beat it. At most cap_s.
double search_time_cap(const Tuner& tuner, double cap_s);

// During the final race on the next seeds: one cap for every finalist's seeds, from the best first-seed
// (budget level 1) time, loose enough (x2 + 10 s) for a seed that needs one more evaluation than
// the best did (fashion-cnn: 25 s to the target after 2 epochs, 38 s after 3). A finalist that
// misses a seed is never chosen, so a cap that cuts a slower seed disqualifies it. The search cap
// would follow best(), which during the race moves with each new seed's figure, so finalists
// raced later would run under other caps than the first.
double race_time_cap(const Tuner& tuner, double cap_s);

}  // namespace dyno
