#| benfred/py-spy tests/scripts/delayed_launch.sh (commit d230d8208d65),
#| copied unchanged below this notice; MIT licence, see ../LICENSE-pyspy.
sleep 0.5
python -c "import time; time.sleep(1000)"
