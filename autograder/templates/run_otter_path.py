import os as _os
import sys as _sys

# tapetrace: the otter plugin (files/autograder/otter_plugin.py) must import in this process
_sys.path.insert(0, _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "files"))
