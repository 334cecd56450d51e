from django.shortcuts import get_object_or_404, render

from sizing import selectors


def home(request):
    return render(
        request,
        "sizing/home.html",
        {"models": selectors.llm_models(), "accelerators": selectors.accelerators()},
    )


def model_detail(request, slug: str):
    llm = get_object_or_404(selectors.llm_models(), slug=slug)
    return render(request, "sizing/model_detail.html", {"llm": llm})


def accelerator_detail(request, slug: str):
    acc = get_object_or_404(selectors.accelerators(), slug=slug)
    return render(request, "sizing/accelerator_detail.html", {"acc": acc})
