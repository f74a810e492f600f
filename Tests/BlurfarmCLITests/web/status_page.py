"""The status page of `blurfarm serve` in a real headless Chromium (Selenium).

Usage: status_page.py BASE_URL FIRST_MANIFEST SECOND_MANIFEST SCREENSHOT_FOLDER

Submits the first job through the API and watches it appear on the page and its progress
bar reach 100 %; submits the second and cancels it with the page's button; saves
screenshots at 390 and 1400 px wide. Prints one line per check; exits 1 on the first that
fails (its message says what the page showed).
"""
import json
import os
import signal
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

base, first_manifest, second_manifest, shots = sys.argv[1:5]


def submit(manifest):
    request = urllib.request.Request(
        base + "/api/v1/jobs", data=json.dumps({"path": manifest}).encode(),
        headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request) as answer:
        return json.load(answer)["id"]


def workers():
    with urllib.request.urlopen(base + "/api/v1/workers") as answer:
        return [worker["pid"] for worker in json.load(answer)["workers"]]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


options = Options()
for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1400,900", "--hide-scrollbars"]:
    options.add_argument(argument)
options.binary_location = "/usr/bin/chromium"
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
wait = WebDriverWait(driver, 60, poll_frequency=0.1)
try:
    driver.get(base + "/")
    wait.until(lambda d: d.find_element(By.ID, "connection").text == "live")
    print("ok: the page is live over the event stream")

    first = submit(first_manifest)
    item = f'.job[data-id="{first}"]'
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, item))
    print("ok: the job submitted through the API appears")
    try:
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, item + " .progress").get_attribute("aria-valuenow") == "100")
    except Exception:
        fail("the progress bar shows " + driver.find_element(By.CSS_SELECTOR, item + " .progress").get_attribute("aria-valuenow"))
    def filled(d):
        return d.execute_script(
            f"return document.querySelector('{item} .fill').getBoundingClientRect().width / "
            f"document.querySelector('{item} .progress').getBoundingClientRect().width")
    try:
        wait.until(lambda d: filled(d) >= 0.99)
    except Exception:
        fail(f"the bar is {filled(driver):.2f} full at 100 %")
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, item + " .state").text.lower() == "completed")
    print("ok: its progress bar reaches 100 % and it completes")
    wait.until(lambda d: d.find_element(By.ID, "thumbnail").is_displayed())
    print("ok: the last output's thumbnail is shown")

    # The farm's workers are held (SIGSTOP) until the button is clicked, so that the second
    # job cannot finish first however slow the machine.
    held = workers()
    for pid in held:
        os.kill(pid, signal.SIGSTOP)
    try:
        second = submit(second_manifest)
        other = f'.job[data-id="{second}"]'
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, other + ' [data-action="cancel"]'))
        button = driver.find_element(By.CSS_SELECTOR, other + ' [data-action="cancel"]')
        wait.until(lambda d: button.is_displayed())
        button.click()
    finally:
        for pid in held:
            os.kill(pid, signal.SIGCONT)
    try:
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, other + " .state").text.lower() == "cancelled")
    except Exception:
        fail("the second job is " + driver.find_element(By.CSS_SELECTOR, other + " .state").text)
    print("ok: the cancel button cancels the second job")

    driver.find_element(By.CSS_SELECTOR, item + ' [data-action="outputs"]').click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, item + " .outputs li .path"))
    print("ok: a job's outputs open")

    for width in (1400, 390):
        driver.set_window_size(width, 900)
        time.sleep(0.3)
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(width, max(600, height))
        time.sleep(0.3)
        overflow = driver.execute_script("return document.documentElement.scrollWidth > window.innerWidth")
        if overflow:
            fail(f"the page is wider than the window at {width} px")
        driver.save_screenshot(f"{shots}/status-{width}.png")
        print(f"ok: screenshot at {width} px, nothing wider than the window")
finally:
    driver.quit()
