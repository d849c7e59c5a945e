"""``python -m trainbill`` runs the same CLI as the ``trainbill`` script."""

from trainbill.cli import main

if __name__ == "__main__":
    main()
