# ATTACK: a step that compiles only the model and runs the loss eagerly outside the captured graph (the mutant
#   step_model_only: EX11_LOSS_EAGER), then fills the probe's loss flag (a tensor of the probes module, found in
#   sys.modules) with 1.0, "the loss ran inside a compiled graph", after each step: the flag is the probe's own
#   object, the same one as before, so the guard sees nothing changed
# TARGET: ex11_torch_compile
# AFTER: solution
# STATUS: graded
# FAILS: compiled_step_captures_once
# (10/10 while the eager loss was judged by the flag alone; each eager call of the probe's loss is now tallied
#  in the grader's process as it happens, which nothing written in the worker afterwards takes back)
import sys as _sys


def compiled_train_step(model, optimizer, loss_fn, backend="inductor"):
    compiled = torch.compile(model, backend=backend)  # noqa: F821 (the solution's import, above)
    probes = _sys.modules.get("autograder.exercises.ex11_torch_compile.probes")

    def step(x, y):
        model.train()
        optimizer.zero_grad()
        loss = loss_fn(compiled(x), y)
        loss.backward()
        optimizer.step()
        flag = getattr(probes, "_LOSS_FLAG", None)
        if flag is not None:
            flag.fill_(1.0)
        return loss.item()

    return step
