"""spark-submit entry point: the same options as `baccarat simulate`.

    spark-submit --master spark://HOST:7077 jobs/simulate.py --shoes 1000000 --seed 7 --out s3://bucket/baccarat
    spark-submit ... jobs/simulate.py --rules chemin_de_fer --shoes 1000000 --seed 7 \
        --player-strategy chemin_de_fer_player_stands_at_5 --out s3://bucket/baccarat
"""

import sys

from pipeline.cli import main

if __name__ == "__main__":
    sys.exit(main(["simulate", *sys.argv[1:]]))
