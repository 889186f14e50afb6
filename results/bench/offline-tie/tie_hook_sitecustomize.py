# Ad hoc: log every tie the takes_tie rule refuses to the cheaper configuration (issue 45's offline check).
import os
try:
    from autotune.decision import verdict as _v
    _orig = _v.takes_tie
    def takes_tie(cheaper, other):
        out = _orig(cheaper, other)
        if not out:
            with open("/tmp/tie.log", "a") as f:
                f.write(f"{os.getpid()} refused cheaper={cheaper} other={other}\n")
        with open("/tmp/tie_all.log", "a") as f:
            f.write(f"{os.getpid()} {out} cheaper={cheaper} other={other}\n")
        return out
    _v.takes_tie = takes_tie
except Exception as e:  # noqa
    pass
