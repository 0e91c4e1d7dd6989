# ATTACK: compile_for_any_batch compiles with dynamic=False (a new graph for every batch size), then writes Dynamo's
#   own graph count (torch._dynamo.utils.counters, the worker's memory) back to one graph after every call
# TARGET: ex11_torch_compile
# AFTER: solution
# STATUS: graded
# FAILS: any_batch_compiles_once
# MESSAGE: graphs
from torch._dynamo.utils import counters as _counters


def compile_for_any_batch(model, backend="inductor"):
    compiled = torch.compile(model, backend=backend, dynamic=False)

    def run(x):
        out = compiled(x)
        stats = _counters["stats"]
        dict.__setitem__(stats, "unique_graphs", min(stats["unique_graphs"], 1))
        return out

    return run
