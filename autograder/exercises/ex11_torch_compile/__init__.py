"""ex11_torch_compile: PyTorch's own trace: graph capture, graph breaks, recompiles."""

from autograder.exercises import Exercise

META = Exercise(
    title="Exercise 11 — PyTorch's own trace: graph capture, graph breaks, recompiles.",
    frameworks=("torch",),
    compiles=True,  # torch.compile: the zygote imports and warms torch._dynamo
    cost=4.4,
    names=("clip_by_norm", "graph_report", "compile_for_any_batch", "compiled_train_step"),
)
