"""The skeleton `tapetrace new` writes (autograder/_cmd_new.py): templates, never imported by the engine."""
