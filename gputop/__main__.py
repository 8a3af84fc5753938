import sys

from gputop.cli import main

sys.exit(main())
