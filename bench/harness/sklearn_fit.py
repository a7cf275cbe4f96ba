#!/usr/bin/python3
"""scikit-learn peers of the bench suites: one fit per process (bench/harness/peers.R).

usage: sklearn_fit.py DIR METHOD TASK COMPONENTS

DIR/train.csv, DIR/test.csv: numeric, no header, the response in the last column
(class codes 0, 1, ... for classification).  METHOD: "nystroem" (Nystroem
features + RidgeClassifier, or Ridge for regression), "svc" (SVC, or SVR with
C = 10 for regression, as ksvm's eps-svr with C = 10), "rbf_sampler"
(RBFSampler(n_components = COMPONENTS).fit_transform on the training x: the
transform alone).  Every model runs after StandardScaler.
Prints: RESULT value elapsed cpu peak_mb blas, where peak is the resident
memory beyond what the process held once the data were read.
"""
import os
import resource
import sys
import time

import numpy as np


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def blas_name():
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
    except OSError:
        return "unknown"
    if "libopenblas" in maps:
        return "OpenBLAS"
    if "/blas/libblas" in maps:
        return "reference_BLAS"
    return "numpy_default"


def main():
    d, method, task, comps = sys.argv[1:5]
    tr = np.loadtxt(os.path.join(d, "train.csv"), delimiter=",", ndmin=2)
    xtr, ytr = tr[:, :-1], tr[:, -1]
    classification = task == "classification"
    from sklearn.kernel_approximation import Nystroem, RBFSampler
    from sklearn.linear_model import Ridge, RidgeClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC, SVR
    if method == "nystroem":
        feat = Nystroem(n_components=min(int(comps), xtr.shape[0]), random_state=1)
        head = RidgeClassifier() if classification else Ridge()
        model = make_pipeline(StandardScaler(), feat, head)
    elif method == "svc":
        model = make_pipeline(StandardScaler(), SVC() if classification else SVR(C=10))
    elif method == "rbf_sampler":
        model = RBFSampler(n_components=int(comps), gamma=0.5, random_state=1)
        model.fit_transform(xtr[:50])  # warm-up
    else:
        raise SystemExit("unknown method " + method)
    base = peak_mb()
    c0 = time.process_time()
    t0 = time.perf_counter()
    if method == "rbf_sampler":
        model.fit_transform(xtr)
    else:
        model.fit(xtr, ytr)
    secs = time.perf_counter() - t0
    cpu = time.process_time() - c0
    extra = peak_mb() - base
    value = float("nan")
    if method != "rbf_sampler":
        te = np.loadtxt(os.path.join(d, "test.csv"), delimiter=",", ndmin=2)
        pred = model.predict(te[:, :-1])
        if classification:
            value = float(np.mean(pred == te[:, -1]))
        else:
            value = float(np.sqrt(np.mean((pred - te[:, -1]) ** 2)))
    print("RESULT %.6f %.4f %.4f %.1f %s" % (value, secs, cpu, extra, blas_name()))


if __name__ == "__main__":
    main()
