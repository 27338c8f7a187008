"""The main job, small: run a user kernel and show the lanes at work."""

import vector_add

if __name__ == "__main__":
    vector_add.main()
