"""The layout's one rule, checked on every #include: the engine never includes an application, and inside the
engine the arrows point down (docs/architecture.md)."""
import os
import re
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("KILN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# What each folder of src/ may include (by the first path component of a quoted include; "kiln" is the public API,
# checked separately below). ops/*_px.h are plain per-pixel functions io may use (the gray weights).
ALLOWED = {
    "core": {"core", "kiln"},
    "profiler": {"core", "profiler", "kiln"},
    "ops": {"core", "ops", "profiler", "kiln", "generated"},
    "io": {"core", "io", "profiler", "kiln", "ops_px"},
    "pipeline": {"core", "pipeline", "profiler", "kiln"},
    "exec": {"core", "ops", "exec", "profiler", "kiln"},
    "infer": {"core", "ops", "exec", "infer", "profiler", "kiln"},
    "scale": {"core", "scale", "kiln"},
    "pictures": {"core", "io", "pictures", "kiln"},
    "apps": {"core", "ops", "exec", "infer", "io", "pipeline", "profiler", "scale", "pictures", "apps", "kiln"},
}
# Public headers an engine folder must not include (they belong to layers above it).
FORBIDDEN_PUBLIC = {
    "core": {"kiln/exec.h", "kiln/image_ops.h", "kiln/apps/"},
    "profiler": {"kiln/exec.h", "kiln/image_ops.h", "kiln/apps/"},
    "ops": {"kiln/exec.h", "kiln/image_ops.h", "kiln/apps/"},
    "io": {"kiln/exec.h", "kiln/image_ops.h", "kiln/apps/"},
    "pipeline": {"kiln/exec.h", "kiln/image_ops.h", "kiln/apps/"},
    "scale": {"kiln/exec.h", "kiln/image_ops.h", "kiln/apps/"},
    "pictures": {"kiln/exec.h", "kiln/image_ops.h", "kiln/apps/"},
    "exec": {"kiln/apps/"},
    "infer": {"kiln/apps/"},
}


def sources(folder):
    for path in sorted((ROOT / folder).rglob("*")):
        if path.suffix in (".h", ".cpp", ".cu", ".cuh", ".cl", ".c"):
            yield path


def area_of(include):
    if re.fullmatch(r"ops/[a-z_]+_px\.h|ops/kernel_defs\.h", include):
        return "ops_px"
    return include.split("/", 1)[0]


def test_engine_folders_include_only_what_is_below_them():
    problems = []
    for folder, allowed in ALLOWED.items():
        for path in sources(f"src/{folder}"):
            for include in INCLUDE.findall(path.read_text(errors="replace")):
                area = area_of(include)
                ok = area in allowed or (area == "ops_px" and "ops" in allowed)
                if "/" in include and not ok:
                    problems.append(f"{path.relative_to(ROOT)} includes {include}")
                for banned in FORBIDDEN_PUBLIC.get(folder, ()):
                    if include.startswith(banned):
                        problems.append(f"{path.relative_to(ROOT)} includes {include}")
    assert problems == []


def test_public_engine_headers_never_include_an_application():
    problems = []
    for path in sources("include/kiln"):
        if "apps" in path.parts:
            continue
        for include in INCLUDE.findall(path.read_text()):
            if include.startswith("kiln/apps/"):
                problems.append(f"{path.relative_to(ROOT)} includes {include}")
    # An op family's parameters do not depend on how calls are run.
    for path in sources("include/kiln/ops"):
        for include in INCLUDE.findall(path.read_text()):
            if include in ("kiln/exec.h", "kiln/image_ops.h"):
                problems.append(f"{path.relative_to(ROOT)} includes {include}")
    assert problems == []


@pytest.mark.parametrize("folder", ["src", "cli", "python/src"])
def test_no_source_file_does_two_jobs_at_this_size(folder):
    too_long = [f"{p.relative_to(ROOT)}: {n} lines" for p in sources(folder)
                if (n := len(p.read_text(errors="replace").splitlines())) > 520]
    assert too_long == []
