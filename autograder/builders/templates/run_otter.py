"""The autograder zip's ``run_otter.py``: what ``run_autograder`` starts on Gradescope and in ``otter grade``'s
containers (``tapetrace build`` writes this file in place of otter's own).

It runs before otter is imported, as root, in the container that grades one submission, and does what
otter's runner would otherwise get wrong before the tapetrace plugin can act (``autograder.builders.otter_folder.before_otter``):

- ``submission_metadata.json`` becomes a JSON object when it is empty or unreadable (``otter grade``'s
  image ``touch``es an empty one, and otter's runner ``json.load``s it whenever a plugin is named);
- the submission folder keeps only the file otter grades (the one notebook, else the one ``.py``):
  anything else a submission carries (a ``.OTTER_LOG`` that otter would unpickle, packages, PDFs) is
  deleted before otter reads the folder; a zip submission (``otter grade --ext zip``) gives only its
  notebook;
- PDFs are refused (``otter grade --pdfs``, ``pdf``/``token`` in ``otter_config.json``): grading goes on
  without them and each PDF otter would copy out says why;
- afterwards, what ``otter grade`` copies back out of the container is there (the zip submission,
  kept aside while otter runs; the PDF notes), or it would lose the row.

Then otter's runner grades the folder (``files/`` is first on the import path, so the plugin imports).
"""

import importlib.util as _ilu
import os as _os
import sys as _sys

_SOURCE = _os.path.dirname(_os.path.abspath(__file__))
_AUTOGRADER = _os.path.dirname(_SOURCE)  # /autograder on Gradescope and in otter grade's containers

# tapetrace: the otter plugin (files/autograder/otter_plugin.py) must import in this process
_sys.path.insert(0, _os.path.join(_SOURCE, "files"))


def _folder():
    """The zip's ``autograder/builders/otter_folder.py``, loaded by path (its top level imports the standard library
    only)."""
    path = _os.path.join(_SOURCE, "files", "autograder", "builders", "otter_folder.py")
    spec = _ilu.spec_from_file_location("_tapetrace_otter_folder", path)
    module = _ilu.module_from_spec(spec)
    spec.loader.exec_module(module)
    _sys.modules["_tapetrace_otter_folder"] = module  # the plugin's bridge reuses this module
    return module


def main():
    """Prepares the folder, then runs otter's autograder with the overrides that preparation needs."""
    folder = _folder()
    overrides, after = folder.before_otter(_AUTOGRADER)
    try:
        from otter.run.run_autograder import main as run_autograder
    except ModuleNotFoundError as e:
        if "'otter'" in str(e):
            raise RuntimeError(
                "The 'otter' module could not be imported. This is usually caused by errors while building the "
                "grading image, so check the image build logs and include them when requesting support."
            ) from e
        raise
    try:
        run_autograder(_AUTOGRADER, **overrides)
    finally:
        folder.after_otter(after)


if __name__ == "__main__":
    main()
