"""The notebook's set-up cell: ``autograder.builders.notebook.setup_source`` writes its comment lines, then this.

Slots: ``__RUNTIMEFILE__`` (the runtime zip's file name), ``__LANG__`` and ``__DAMAGED__`` (the message
of a damaged cell), string contents; ``__SHA256__`` and ``__DATA__``: the runtime zip's sha256 and its
base64; ``__HELPERS__`` (code: what the function returns, ``_notebook.HELPERS``) and ``__NAMES__``
(the names the cell defines). The function imports the modules its helpers come from.
"""

__HELPERS__ = None

# ---- template ----
def _tapetrace_setup(sha256, data):
    import base64, hashlib, importlib, os, sys, zipimport
    blob = base64.b64decode(data)
    if hashlib.sha256(blob).hexdigest() != sha256:
        raise RuntimeError("__DAMAGED__")
    path = os.path.abspath("__RUNTIMEFILE__")
    if not (os.path.isfile(path) and open(path, "rb").read() == blob):
        with open(path + ".tmp", "wb") as fh:
            fh.write(blob)
        os.replace(path + ".tmp", path)
    for name in [m for m in sys.modules if m == "autograder" or m.startswith("autograder.")]:
        del sys.modules[name]
    sys.path[:] = [p for p in sys.path if os.path.basename(str(p)) != "__RUNTIMEFILE__"]
    sys.path.insert(0, path)
    sys.path_importer_cache.pop(path, None)
    getattr(zipimport, "_zip_directory_cache", {}).pop(path, None)
    importlib.invalidate_caches()
    from autograder import student
    from autograder.builders import public as _public
    from autograder.student import figures, hints
    from autograder.student import compat, devices, stack
    devices.ensure_host_devices()  # before JAX starts: 8 CPU devices for ex13's meshes
    _public.set_language("__LANG__")
    student.set_language("__LANG__")
    stack.check_stack("__LANG__")  # package metadata only: says which version to install, if any
    compat.add_missing()  # APIs a supported older version lacks (imports a library only when it needs one)
    return __HELPERS__

__NAMES__ = _tapetrace_setup("__SHA256__", "__DATA__")
