"""The thin CLI: one real subparser per subcommand (its own --help, its own one-line errors)."""

from __future__ import annotations

import importlib

import pytest

from autograder import cli

OWN_OPTIONS = {"grade": ["--json", "--shard", "--require-isolation", "--cluster"],
               "merge": ["--json", "--csv", "PART.json"],
               "stubs": ["solutions/"],
               "build": ["--check", "--self-study", "--refresh-snapshot", "--gpu-torch", "--hide-results", "--no-verify"],
               "report": ["--out", "--title", "--feedback-format", "RESULTS"],
               "figures": ["--epochs", "--lr", "--dpi"],
               "new": ["exNN_name", "--title", "--frameworks", "--force"],
               "regrade": ["OLD.json", "--json", "--all", "SUBMISSION"],
               "gradebook": ["--out", "--format", "--roster", "--deadline", "--penalty", "--extensions", "--times"],
               "similarity": ["--out", "--threshold", "--top", "SUBMISSION"],
               "feedback": ["--roster", "--out", "--overrides", "--moodle-zip", "RESULTS.json"],
               "review": ["GRADES.json", "--overrides", "--roster", "--port"]}


def test_every_command_is_a_module_with_add_parser_and_run():
    assert set(cli.COMMANDS) == set(OWN_OPTIONS)
    for name in cli.COMMANDS:
        mod = importlib.import_module(f"autograder.cli.{name}")
        assert callable(mod.add_parser) and callable(mod.run), name
        args = cli.build_parser().parse_args([name, *(["x"] if name in ("grade", "report", "new", "similarity", "review")
                                                      else []),
                                              *(["x", "--json", "o.json"] if name in ("merge", "regrade") else []),
                                              *(["x", "--out", "o.csv"] if name == "gradebook" else []),
                                              *(["x", "--roster", "r.csv", "--out", "o"] if name == "feedback"
                                                else [])])
        assert args.func is mod.run


@pytest.mark.parametrize("name", sorted(OWN_OPTIONS))
def test_help_lists_the_subcommands_own_options(name, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([name, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: tapetrace {name} ")
    for option in OWN_OPTIONS[name]:
        assert option in out, (name, option)


@pytest.mark.parametrize("argv", [["build", "--no-such-option"], ["figures", "--epochs", "many"],
                                  ["report"], ["grade", "x", "--bogus", "1"]])
def test_bad_arguments_are_one_line_from_the_subcommand(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"tapetrace {argv[0]}: "), err
    assert err.rstrip().endswith(f"(see tapetrace {argv[0]} --help)")


def test_an_absent_command_module_says_so(monkeypatch, capsys):
    real = importlib.import_module

    def fake(name, *a, **kw):
        if name == "autograder.cli.figures":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real(name, *a, **kw)

    monkeypatch.setattr(cli.importlib, "import_module", fake)
    assert cli.main(["figures", "--epochs", "3"]) == 2
    assert "`figures` is not available in this installation" in capsys.readouterr().err
