"""What a newcomer reads first (issue 37, newcomer items 1 and 7): how to reach the `tapetrace` command in a
fresh clone, the subcommands listed as the CLI has them, and a pyproject.toml setuptools reads without
deprecation (the SPDX licence) that recommends only forms the code accepts."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from autograder.cli.app import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
FIRST_PAGES = ["README.md", "docs/index.md", "docs/instructors/index.md"]


@pytest.mark.parametrize("page", FIRST_PAGES)
def test_the_first_pages_say_how_to_reach_the_command_before_using_it(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    first_use = re.search(r"^tapetrace \w", text, re.MULTILINE)
    before = text[:first_use.start()] if first_use else text
    assert "source .venv/bin/activate" in before and ".venv/bin/tapetrace" in before, page


@pytest.mark.parametrize("page", ["README.md", "docs/instructors/grading.md"])
def test_subcommand_lists_name_every_subcommand(page: str) -> None:
    text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
    lists = re.findall(r"Every subcommand \(([^)]*)\)", text)
    assert lists, page
    for listed in lists:
        assert re.findall(r"`(\w+)`", listed) == list(COMMANDS), page


def test_pyproject_licence_is_spdx_and_setuptools_reads_it_without_deprecation() -> None:
    from setuptools.config.pyprojecttoml import apply_configuration, read_configuration
    from setuptools.dist import Distribution

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        apply_configuration(Distribution(), str(ROOT / "pyproject.toml"))
    assert read_configuration(str(ROOT / "pyproject.toml"))["project"]["license"] == "MIT"
    floor = re.search(r'^requires = \["setuptools>=(\d+)"\]', (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert floor and int(floor.group(1)) >= 77  # the SPDX string needs setuptools 77 (PEP 639)
    assert not [str(w.message) for w in caught if "license" in str(w.message).lower()]


def test_pyproject_recommends_only_the_accepted_form_of_the_pytest_option() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "--tapetrace-submission=PATH" in text
    assert not re.search(r"--tapetrace-submission [A-Z]", text)
