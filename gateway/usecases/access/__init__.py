"""Access: who a key is, its unit of work, the policy in force and what an agent may be told."""
