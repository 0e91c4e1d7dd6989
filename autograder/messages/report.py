"""The per-student feedback's fixed words (``tapetrace report``; UI text, catalogued like messages)."""

EN = {
    "report.feedback": "Feedback",
    "report.total": "Total",
    "report.test": "test",
    "report.points": "points",
    "report.result": "result",
    "report.passed": "passed",
    "report.failed": "failed",
    "report.hidden": "hidden",
    "report.public": "public",
    "report.device": "graded on",
    "report.no_exercises": "No exercise was graded.",
    "status.graded": "graded",
    "status.missing": "missing",
    "status.error": "error",
    "status.timeout": "timeout",
    "status.crashed": "crashed",
}

ES = {
    "report.feedback": "Retroalimentación",
    "report.total": "Total",
    "report.test": "prueba",
    "report.points": "puntos",
    "report.result": "resultado",
    "report.passed": "superada",
    "report.failed": "fallida",
    "report.hidden": "oculta",
    "report.public": "pública",
    "report.device": "corregido en",
    "report.no_exercises": "No se corrigió ningún ejercicio.",
    "status.graded": "corregido",
    "status.missing": "falta",
    "status.error": "error",
    "status.timeout": "tiempo agotado",
    "status.crashed": "caída",
}
