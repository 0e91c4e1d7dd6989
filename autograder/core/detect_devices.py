"""What torch and JAX see, printed as one JSON line: ``autograder.core.device`` runs this file's text in a
fresh interpreter (``python -c``), so the grader's own process never initialises CUDA or a JAX backend.

Standard library at the top only; torch and JAX are imported inside :func:`main`, each failure ignored
(a missing or broken framework reads as ``cpu``).
"""

import json


def main() -> None:
    """Prints ``{"torch": "cpu"|"cuda", "jax": "cpu"|"gpu"|"tpu"|...}``."""
    out = {"torch": "cpu", "jax": "cpu"}
    try:
        import torch

        out["torch"] = "cuda" if torch.cuda.is_available() else "cpu"
    except Exception:
        pass
    try:
        import jax

        out["jax"] = jax.default_backend()
    except Exception:
        pass
    print(json.dumps(out))


if __name__ == "__main__":
    main()
