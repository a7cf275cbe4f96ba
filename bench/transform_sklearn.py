# Worker of bench/transform.R: times scikit-learn's RBFSampler.transform (and
# numpy's cos) on the data files that transform.R wrote, under whatever BLAS
# this python process loaded (transform.R starts it once per BLAS, choosing
# the library through LD_LIBRARY_PATH).  Not meant to be run by hand:
#   python3 transform_sklearn.py <label> <dir> <cells> [cos]
# reads <dir>/plan.csv, <dir>/x.bin, <dir>/w_<d>_<D>.bin, <dir>/b_<D>... and
# writes <dir>/result_<label>_python.csv and <dir>/info_<label>_python.txt.
import csv
import os
import statistics
import sys
import time

import numpy as np
import sklearn
from sklearn.kernel_approximation import RBFSampler

label, wdir, which = sys.argv[1], sys.argv[2], sys.argv[3]
do_cos = len(sys.argv) > 4 and sys.argv[4] == "cos"

with open(os.path.join(wdir, "limits.csv")) as f:
    limits = {r["name"]: float(r["value"]) for r in csv.DictReader(f)}
MAX_SECONDS = limits["max_seconds"]
MAX_BYTES = limits["max_bytes"]
SMALL_SECONDS = limits["small_seconds"]
WARMUP_SECONDS = limits["warmup_seconds"]
NMAX, DMAX = int(limits["nmax"]), int(limits["dmax"])


def loaded_blas():
    """The BLAS shared objects mapped into this process."""
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if "blas" in os.path.basename(p).lower():
                libs.add(os.path.realpath(p))
    return ";".join(sorted(libs)) or "none found"


def blas_threads():
    try:
        from threadpoolctl import threadpool_info
        n = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
        return str(n[0]) if n else "1 (reference BLAS)"
    except Exception:
        return "unknown"


def run(f, est):
    """Median seconds of f(): warm-up + 3 runs when small, 1 run when big."""
    reps = 3 if (est is None or est <= SMALL_SECONDS) else 1
    if est is None or est <= WARMUP_SECONDS:
        f()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        z = f()
        t.append(time.perf_counter() - t0)
        del z
    return statistics.median(t), reps


plan = list(csv.DictReader(open(os.path.join(wdir, "plan.csv"))))
if which == "headline":
    plan = [c for c in plan if c["headline"] == "TRUE"]

X = np.fromfile(os.path.join(wdir, "x.bin"), dtype=np.float64).reshape(NMAX, DMAX)
rows = []
measured = {}   # d -> (n * D, seconds) of the largest cell run so far
for cell in plan:
    n, d, D = int(cell["n"]), int(cell["d"]), int(cell["D"])
    out = {"env": label, "contender": "sklearn", "n": n, "d": d, "D": D,
           "seconds": "", "runs": 0, "status": ""}
    need = 8.0 * n * D + 8.0 * NMAX * DMAX + 8.0 * n * d
    est = None
    if d in measured:
        size, secs = measured[d]
        est = secs * (n * D) / size
    if need > MAX_BYTES:
        out["status"] = "skipped (memory)"
    elif est is not None and est > MAX_SECONDS:
        out["status"] = "skipped (time)"
        out["seconds"] = "%.0f" % est
    else:
        x = np.ascontiguousarray(X[:n, :d])
        w = np.fromfile(os.path.join(wdir, "w_%d_%d.bin" % (d, D))).reshape(d, D)
        b = np.fromfile(os.path.join(wdir, "b_%d_%d.bin" % (d, D)))
        rbf = RBFSampler(gamma=0.5, n_components=D, random_state=0).fit(x[:10])
        # the same frequencies and phases as bochner's map
        rbf.random_weights_ = w
        rbf.random_offset_ = b
        zref = np.fromfile(os.path.join(wdir, "z_%d_%d.bin" % (d, D))).reshape(-1, D)
        err = np.max(np.abs(rbf.transform(x[:zref.shape[0]]) - zref))
        if not err < 1e-10:
            sys.exit("sklearn and bochner disagree at n=%d d=%d D=%d: %g" % (n, d, D, err))
        secs, reps = run(lambda: rbf.transform(x), est)
        measured[d] = (n * D, secs)
        out.update(seconds="%.6f" % secs, runs=reps, status="ok")
        del x
    rows.append(out)
    print("  %-8s sklearn   n=%6d d=%3d D=%4d  %s %s" %
          (label, n, d, D, out["seconds"], out["status"]), flush=True)

if do_cos:
    u = np.fromfile(os.path.join(wdir, "u.bin"))
    a = np.empty_like(u)

    def cos_inplace():
        np.copyto(a, u)          # fresh arguments each time, not timed
        t0 = time.perf_counter()
        np.cos(a, out=a)
        return time.perf_counter() - t0

    cos_inplace()
    t = statistics.median(cos_inplace() for _ in range(5))
    rows.append({"env": label, "contender": "numpy_cos_inplace", "n": u.size, "d": 0,
                 "D": 0, "seconds": "%.6f" % t, "runs": 5, "status": "ok"})

    aw, uw = a[:1000000], u[:1000000]

    def cos_inplace_warm():      # 10 calls on 1e6 entries, fresh arguments each
        t = 0.0
        for _ in range(10):
            np.copyto(aw, uw)
            t0 = time.perf_counter()
            np.cos(aw, out=aw)
            t += time.perf_counter() - t0
        return t

    cos_inplace_warm()
    t = statistics.median(cos_inplace_warm() for _ in range(5))
    rows.append({"env": label, "contender": "numpy_cos_inplace_warm", "n": 10 * uw.size,
                 "d": 0, "D": 0, "seconds": "%.6f" % t, "runs": 5, "status": "ok"})

    def cos_fresh():
        t0 = time.perf_counter()
        z = np.cos(u)
        t1 = time.perf_counter()
        del z
        return t1 - t0

    cos_fresh()
    t = statistics.median(cos_fresh() for _ in range(5))
    rows.append({"env": label, "contender": "numpy_cos_fresh", "n": u.size, "d": 0,
                 "D": 0, "seconds": "%.6f" % t, "runs": 5, "status": "ok"})

with open(os.path.join(wdir, "result_%s_python.csv" % label), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["env", "contender", "n", "d", "D", "seconds",
                                      "runs", "status"])
    w.writeheader()
    w.writerows(rows)
with open(os.path.join(wdir, "info_%s_python.txt" % label), "w") as f:
    f.write("process\tpython %s (numpy %s, scikit-learn %s)\n" %
            (sys.version.split()[0], np.__version__, sklearn.__version__))
    f.write("blas\t%s\n" % loaded_blas())
    f.write("threads\t%s\n" % blas_threads())
