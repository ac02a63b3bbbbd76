"""Methods, targets and checks of another package register themselves through entry points.

A temporary distribution (a ``*.dist-info`` directory with ``entry_points.txt`` beside its module on
``sys.path``) is what ``pip install`` leaves behind; ``importlib.metadata`` finds it, so every test here
runs a fresh interpreter with that directory on ``PYTHONPATH`` and reads the registries there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

MODULE = """
from samplers.specs import MethodSpec, TargetSpec
from verify.checks import Check


def _run(problem, n_iter, seed, *, step, thin=1, x0=None, progress=None):
    raise NotImplementedError


def _build(seed, n=3):
    raise NotImplementedError


def _rows(quick):
    return [{"check": "myplug.exact.one", "paper": "-", "method": "plug_method", "target": "-",
             "statistic": "s", "value": 1.0, "threshold": 0.5, "passed": True, "detail": "d"}]


METHODS = [MethodSpec("plug_method", "myplug", _run, ("continuous",), {"step": 0.1}, True, "Me 2026",
                      "a method from another package")]
TARGETS = [TargetSpec("plug_target", "continuous", _build, {"n": 3}, "Me 2026", "a target from elsewhere")]
CHECKS = [Check("myplug.exact.one", "exact", "Me 2026", "a check from elsewhere", _rows, family="myplug")]
DUPLICATE = [MethodSpec("rwm", "myplug", _run, ("continuous",), {"step": 0.1}, True, "-", "clash")]
NOT_A_SPEC = ["rwm"]
"""


def _distribution(root: Path, entry_points: str) -> Path:
    """A distribution ``myplug`` 0.1 installed into ``root``: module ``myplug_mod`` + dist-info."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "myplug_mod.py").write_text(MODULE)
    info = root / "myplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    return root


def _python(root: Path, code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(REPO)])}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, cwd=root
    )


GOOD = """
[minibatch_mcmc_bench.methods]
myplug = myplug_mod

[minibatch_mcmc_bench.targets]
myplug = myplug_mod:TARGETS

[minibatch_mcmc_bench.checks]
myplug = myplug_mod
"""


def test_entry_points_register_a_method_a_target_and_a_check(tmp_path):
    root = _distribution(tmp_path / "site", GOOD)
    r = _python(
        root,
        """
        from samplers import registry
        from verify import registry as VR
        print(registry.get_method("plug_method").family, registry.get_target("plug_target").space)
        print(registry.SOURCES[("method", "plug_method")])
        print("myplug" in VR.all_families(), [c.id for c in VR.load_checks(["myplug"])])
        print(VR.find_check("myplug.exact.one").family, VR.families_of_experiments(["myplug"]))
        print("rwm" in registry.METHODS, len(VR.load_checks(["baselines"])) > 0)
        """,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "myplug continuous"
    assert "entry point myplug = 'myplug_mod'" in lines[1] and "distribution myplug" in lines[1]
    assert lines[2] == "True ['myplug.exact.one']"
    assert lines[3] == "myplug ('myplug',)"
    assert lines[4] == "True True"


def test_the_verify_command_runs_a_check_of_another_package_by_id(tmp_path):
    root = _distribution(tmp_path / "site", GOOD)
    out = tmp_path / "out"
    r = _python(
        root,
        f"""
        import sys
        from bench.cli import main
        sys.argv = ["mcmc-bench", "verify", "--check", "myplug.exact.one", "--out-dir", {str(out)!r}]
        sys.exit(main())
        """,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "myplug.exact.one" in (out / "verify_exact.csv").read_text()


@pytest.mark.parametrize(
    "entry_points, message",
    [
        (
            "[minibatch_mcmc_bench.methods]\nclash = myplug_mod:DUPLICATE\n",
            "method id 'rwm' from entry point clash",
        ),
        ("[minibatch_mcmc_bench.methods]\nbad = myplug_mod:NOT_A_SPEC\n", "not a MethodSpec"),
        (
            "[minibatch_mcmc_bench.targets]\nbad = myplug_mod:_build\n",
            "expected a module or object with TARGETS",
        ),
        (
            "[minibatch_mcmc_bench.methods]\ngone = no_such_module_xyz\n",
            "cannot load it (ModuleNotFoundError",
        ),
    ],
    ids=["duplicate-id", "not-a-spec", "not-specs", "import-error"],
)
def test_a_bad_entry_point_is_a_one_line_error_naming_it(tmp_path, entry_points, message):
    root = _distribution(tmp_path / "site", entry_points)
    r = _python(
        root,
        """
        try:
            import samplers.registry
        except ValueError as e:
            print(str(e))
        """,
    )
    assert r.returncode == 0, r.stderr
    assert message in r.stdout and len(r.stdout.strip().splitlines()) == 1, r.stdout


def test_a_check_entry_point_clashing_with_a_shipped_id_is_an_error(tmp_path):
    module = MODULE.replace('"myplug.exact.one", "exact"', '"baselines.kvm.rwm_lattice", "exact"')
    root = _distribution(tmp_path / "site", "[minibatch_mcmc_bench.checks]\nc = myplug_mod\n")
    (root / "myplug_mod.py").write_text(module.replace('family="myplug"', 'family="baselines"'))
    r = _python(
        root,
        """
        from verify import registry as VR
        try:
            VR.load_checks(["baselines"])
        except ValueError as e:
            print(e)
        """,
    )
    assert r.returncode == 0, r.stderr
    assert "check id 'baselines.kvm.rwm_lattice' registered twice" in r.stdout


def test_register_adds_specs_from_a_script_all_or_nothing():
    from samplers import registry
    from samplers.specs import MethodSpec

    def run(problem, n_iter, seed, *, step, thin=1, x0=None, progress=None):
        raise NotImplementedError

    a = MethodSpec("_script_a", "script", run, ("continuous",), {"step": 1.0}, True, "-", "-")
    clash = MethodSpec("rwm", "script", run, ("continuous",), {"step": 1.0}, True, "-", "-")
    try:
        with pytest.raises(ValueError, match="'rwm' from register\\(\\) is registered twice"):
            registry.register(a, clash)
        assert "_script_a" not in registry.METHODS  # nothing added
        registry.register([a])
        assert registry.get_method("_script_a") is a
        with pytest.raises(ValueError, match="registered twice"):
            registry.register(a)
        registry.register(a, replace=True)
        with pytest.raises(ValueError, match="MethodSpec / TargetSpec"):
            registry.register("rwm")
    finally:
        registry.METHODS.pop("_script_a", None)
        registry.SOURCES.pop(("method", "_script_a"), None)


def test_register_check_rejects_a_second_registration_and_non_checks():
    from verify import registry as VR
    from verify.checks import Check

    chk = Check("_script.exact.one", "exact", "-", "-", lambda quick: [], family="_script")
    try:
        VR.register_check(chk)
        assert VR.load_checks(["_script"]) == [chk]
        with pytest.raises(ValueError, match="registered twice"):
            VR.register_check(chk)
        with pytest.raises(TypeError, match="not a Check"):
            VR.register_check("x")  # type: ignore[arg-type]
    finally:
        VR._REGISTERED.remove(chk)


def test_verify_check_with_an_unknown_id_names_the_nearest_ids(capsys):
    from bench.cli import main

    assert main(["verify", "--check", "baselines.kvm.rwm_latice", "--out-dir", "unused"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown check 'baselines.kvm.rwm_latice'" in err[0]
    assert "nearest: baselines.kvm.rwm_lattice" in err[0]
    assert main(["verify", "--check", "x", "--family", "baselines"]) == 2
    assert "not both" in capsys.readouterr().err


def test_plugins_can_be_switched_off_by_the_environment(tmp_path):
    root = _distribution(tmp_path / "site", "[minibatch_mcmc_bench.methods]\ngone = no_such_module_xyz\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(REPO)]), "MCMC_BENCH_PLUGINS": "0"}
    code = "from samplers import registry; print('rwm' in registry.METHODS)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root)
    assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr
