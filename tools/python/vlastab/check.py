"""`python -m vlastab.check ARGS` is `vla-check ARGS`: the program the package ships (pip install)
or finds as judge() does (vlastab.programs: $VLA_BIN_DIR, the package's _bin, make install's
folder, the source tree's bin/, PATH). `python -m vlastab.check --help` says what it checks."""
from .programs import run


def main():
    run("vla-check")


if __name__ == "__main__":
    main()
