"""ex03: other valid ways to write the CNN get full marks (no false fails)."""

from __future__ import annotations

import re

import pytest
from conftest import make_submission

from autograder._paths import SOLUTIONS

EX = "ex03_torch_cnn"

INIT = """        self.features = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Linear(32 * 2 * 2, 64),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(64, num_classes),
        )
"""
FORWARD = """        features = self.features(x)  # (N, 32, 2, 2)
        return self.classifier(torch.flatten(features, start_dim=1))  # flatten -> (N, 128)
"""

VARIANTS = {
    "functional_layers": [
        ("import torch\n", "import torch\nimport torch.nn.functional as F\n"),
        (INIT, """        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = nn.Linear(128, 64)
        self.fc2 = nn.Linear(64, num_classes)
        self.p = dropout
"""),
        (FORWARD, """        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(x.size(0), -1)
        x = F.dropout(F.relu(self.fc1(x)), self.p, training=self.training)
        return self.fc2(x)
"""),
    ],
    "one_sequential_pool_before_relu_dropout_before_relu": [
        (INIT, """        self.net = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1),
            nn.MaxPool2d(2),
            nn.ReLU(),
            nn.Conv2d(16, 32, kernel_size=3, padding=1),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(128, 64),
            nn.Dropout(p=dropout),
            nn.ReLU(),
            nn.Linear(64, num_classes),
        )
"""),
        (FORWARD, "        return self.net(x)\n"),
    ],
}


def _source(subs: list[tuple[str, str]]) -> str:
    text = (SOLUTIONS / f"{EX}.py").read_text()
    text = "\n".join(line for line in text.splitlines()
                     if not re.match(r"^\s*# (BEGIN|END) SOLUTION\s*$", line)) + "\n"
    for old, new in subs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_valid_variant_gets_full_marks(run, tmp_path, variant):
    sub = make_submission(tmp_path / "sub", {EX: _source(VARIANTS[variant])}, only=[EX])
    res = run.grade([str(sub)], only=[EX])[0]["exercises"][EX]
    failed = {t["name"]: t["message"] for t in res["tests"] if not t["passed"]}
    assert not failed, failed
    assert res["score"] == res["max_score"]
