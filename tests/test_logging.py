"""``configure_logging``: the library's logger, with ``name`` as the label of each line."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_the_library_logger_is_configured_once_with_the_name_as_its_label():
    done = _run(
        "from streamspark.logging import configure_logging\n"
        "import logging\n"
        "print(configure_logging('DEBUG', name='myapp'), configure_logging('INFO'))\n"
        "logging.getLogger('streamspark.engine.runner').debug('hello %s', 1)\n"
        "print(logging.getLogger('streamspark').level == logging.DEBUG, logging.getLogger('myapp').handlers)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["True False", "True []"]
    line = done.stderr.strip()
    assert line.endswith("[DEBUG] [myapp] : hello 1") and line.startswith("["), line


def test_pid_puts_the_process_id_in_each_line_and_none_configures_nothing():
    done = _run(
        "import logging, os\n"
        "from streamspark.logging import configure_logging\n"
        "print(configure_logging(None), logging.getLogger('streamspark').handlers)\n"
        "configure_logging(logging.INFO, pid=True)\n"
        "logging.getLogger('streamspark').info('pid is %s', os.getpid())\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False []"
    line = done.stderr.strip()
    pid = line.rsplit(" ", 1)[1]
    assert f"[INFO] [streamspark] [{pid}] : pid is {pid}" in line
