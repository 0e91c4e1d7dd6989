"""The skeleton `tapetrace new` writes (autograder/cli/new.py): templates, never imported by the engine."""
