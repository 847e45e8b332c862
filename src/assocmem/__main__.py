from assocmem.cli import main

raise SystemExit(main())
