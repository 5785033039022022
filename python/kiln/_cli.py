"""The `kiln` command of a pip-installed kiln: runs the CLI program the wheel carries in kiln/bin."""
import os
import sys


def main():
    program = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "kiln")
    if not os.access(program, os.X_OK):
        sys.exit(f"kiln: {program} is missing: this kiln was not installed from a wheel (build/kiln is the CLI of a "
                 "CMake build)")
    os.execv(program, [program, *sys.argv[1:]])
