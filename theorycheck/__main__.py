from theorycheck.cli.main import main

raise SystemExit(main())
