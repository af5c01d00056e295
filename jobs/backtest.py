"""spark-submit entry point: the same options as `baccarat backtest`.

    spark-submit --master spark://HOST:7077 jobs/backtest.py --run-id RUN --systems flat_banker --out s3://bucket/baccarat
"""

import sys

from pipeline.cli import main

if __name__ == "__main__":
    sys.exit(main(["backtest", *sys.argv[1:]]))
