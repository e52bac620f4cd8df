from gateway.shell.cli import main

raise SystemExit(main())
