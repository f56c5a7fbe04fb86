"""What the model is told besides the conversation: ``system_prompt``, ``instructions`` (project
instructions and the environment block) and ``definitions`` (named child agents a parent may use)."""
