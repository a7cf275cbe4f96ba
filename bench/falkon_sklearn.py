#!/usr/bin/python3
"""scikit-learn peers of bench/falkon.R: one fit per process.

usage: falkon_sklearn.py TRAIN.csv TEST.csv METHOD TASK COMPONENTS

TRAIN.csv / TEST.csv: numeric, no header, the response in the last column
(class codes 0, 1, ... for classification).  METHOD: "nystroem" (Nystroem
features + RidgeClassifier, or Ridge for regression) or "svc" (SVC, or SVR
with C = 10 for regression, as ksvm's eps-svr with C = 10).  TASK:
"classification" or "regression".  COMPONENTS: Nystroem's n_components.
Every model runs after StandardScaler (as ksvm and bochner standardise).
Prints one line: metric value, training seconds, peak resident memory
beyond what the process held once the data were read (MB).
"""
import resource
import sys
import time

import numpy as np
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main():
    train, test, method, task, comps = sys.argv[1:6]
    tr = np.loadtxt(train, delimiter=",", ndmin=2)
    te = np.loadtxt(test, delimiter=",", ndmin=2)
    xtr, ytr = tr[:, :-1], tr[:, -1]
    xte, yte = te[:, :-1], te[:, -1]
    classification = task == "classification"
    if method == "nystroem":
        # gamma: sklearn's default for the RBF kernel, 1 / n_features
        feat = Nystroem(n_components=min(int(comps), xtr.shape[0]), random_state=1)
        head = RidgeClassifier() if classification else Ridge()
        model = make_pipeline(StandardScaler(), feat, head)
    elif method == "svc":
        model = make_pipeline(StandardScaler(), SVC() if classification else SVR(C=10))
    else:
        raise SystemExit("unknown method " + method)
    base = peak_mb()
    t0 = time.perf_counter()
    model.fit(xtr, ytr)
    secs = time.perf_counter() - t0
    extra = peak_mb() - base
    pred = model.predict(xte)
    if classification:
        value = float(np.mean(pred == yte))
    else:
        value = float(np.sqrt(np.mean((pred - yte) ** 2)))
    print("RESULT %.6f %.4f %.1f" % (value, secs, extra))


if __name__ == "__main__":
    main()
