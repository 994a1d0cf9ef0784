import time, sys
from fairviz.conditions import data, simulate
from fairviz.conditions.methods import METHODS
d = data.builtin(sys.argv[1] if len(sys.argv) > 1 else "moji-like")
t = time.time()
methods = tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else ("vanilla", "rw")
res = simulate.run(d, simulate.SimSettings(alphas=(0, 1, 2), methods=methods, seeds=1))
print("sec", round(time.time() - t, 2))
for s in res.selected_rows():
    print(s["alpha"], s["method"], round(s["performance_mean"], 3), round(s["fairness_mean"], 3), round(s["dto"], 3))
print(res.warnings)
print({(r.method): r.epochs for r in res.runs})
