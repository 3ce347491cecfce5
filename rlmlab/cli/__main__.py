from rlmlab.cli import main

main()
