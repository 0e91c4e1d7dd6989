"""ex02: other valid ways to write the exercise get full marks (no false fails)."""

from __future__ import annotations

import re

import pytest
from conftest import make_submission

from autograder._paths import SOLUTIONS

EX = "ex02_torch_training"

BCE = "    per_element = torch.clamp(z, min=0) - z * y + torch.log1p(torch.exp(-torch.abs(z)))\n"
TRAIN = """    model.train()
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
"""
EVAL = """    model.eval()
    with torch.no_grad():
        logits = model(x)
        loss = loss_fn(logits, y).item()
        predictions = (torch.sigmoid(logits) >= 0.5).to(y.dtype)
        accuracy = (predictions == y).float().mean().item()
    return loss, accuracy
"""
FIT = """    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return [train_step(model, optimizer, x, y, bce_with_logits) for _ in range(epochs)]
"""

VARIANTS = {
    "softplus_and_set_to_none_false": [
        (BCE, "    per_element = torch.nn.functional.softplus(z) - z * y\n"),
        (TRAIN, """    model.train()
    model.zero_grad(set_to_none=False)
    out = model(x)
    loss = loss_fn(out, y)
    loss.backward()
    optimizer.step()
    return float(loss.detach())
"""),
    ],
    "logsigmoid_inference_mode_loop": [
        (BCE, "    ls = torch.nn.functional.logsigmoid\n    per_element = -(y * ls(z) + (1 - y) * ls(-z))\n"),
        (EVAL, """    model.eval()
    with torch.inference_mode():
        logits = model(x)
        loss = float(loss_fn(logits, y))
        correct = ((logits >= 0).float() == y).sum().item()
    return loss, correct / y.numel()
"""),
        (FIT, """    opt = torch.optim.Adam(params=model.parameters(), lr=lr)
    history = []
    for _epoch in range(epochs):
        history.append(train_step(model, opt, x, y, bce_with_logits))
    return history
"""),
    ],
    "relu_log_no_log1p": [
        (BCE, "    per_element = torch.relu(z) - z * y + torch.log(1 + torch.exp(-z.abs()))\n"),
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
